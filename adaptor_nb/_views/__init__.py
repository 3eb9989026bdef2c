"""The view kit (private): what the run view and the batch view are made of.

The run view (``_view.RunView``, an anywidget) and what every view shares: the view model a run's events fold into
(``_model``), the update coalescer (``_coalesce``), the static HTML and markdown forms (``_static``, ``_markdown``),
the plain words a view uses (``_words``, ``_workspace``), front-end detection (``_frontend``) and prompt templates
(``_interpolate``). The front end the run view loads ships in ``static/`` (built from ``js/``).

It sits below ``adaptor_nb.notebook`` and ``adaptor_nb.batch`` and above the public API: both import it, it imports
neither.
"""
