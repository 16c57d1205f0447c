// The embeddable widget; see docs/widget.md.
