"""The app's screens: tool-call detail and help."""
