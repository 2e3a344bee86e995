"""Reads of the review console, each page's in its own module; every one is given a ConsoleAccess and
reads only the stores it allows."""
