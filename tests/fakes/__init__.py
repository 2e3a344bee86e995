"""Real, local stand-ins for the outside services memoryhub talks to."""
