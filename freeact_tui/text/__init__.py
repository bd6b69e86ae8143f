"""Text safety: what is shown is what is there. ``safe`` makes hidden and reordering characters
visible, ``codeshow`` shows code for approval, ``userwords`` takes the user's own words from a prompt.
"""
