"""Renderers (a name -> renderer table) and the writers that put a document on stdout or a file."""
