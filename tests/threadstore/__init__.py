"""Thread store tests."""
