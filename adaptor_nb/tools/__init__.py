"""Python functions as tools the Agent hosts for the model (see ``adaptor_nb.tool`` for the public names)."""
