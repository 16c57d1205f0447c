"""Generated gRPC stubs (make proto). Never edit by hand."""
