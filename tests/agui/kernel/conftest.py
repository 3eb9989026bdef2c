"""The notebook tests' kernel fixture (a real IPython kernel with the extension loaded), reused here."""

from notebook.conftest import kernel, notebook_env  # noqa: F401
