"""Sub-commands of ``ragway`` that have grown their own module (eval, train)."""
