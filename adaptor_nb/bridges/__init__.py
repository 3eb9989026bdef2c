"""Bridges from adaptor_nb's Threads and Streams to other protocols (``adaptor_nb.bridges.agui``: AG-UI 1.0).

Each bridge is an optional extra, imported only when used: ``import adaptor_nb`` loads none of them.
"""
