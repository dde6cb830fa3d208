"""Stand-in for IPython where it is not installed: J&W's code displays
tables and HTML with it; here they are printed."""
