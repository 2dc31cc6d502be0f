"""The Compare tab: runs set side against side."""
