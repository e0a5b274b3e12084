"""The `python -m recipe_bcr` commands: thin drivers over the layers below."""
