"""The execution engine below the public handles (private: drivers and users never import it).

Layers, lowest first: ``_options`` (option scopes and merge), ``_broker`` (one run's event stream), ``_messages``
(supplemental-message queue), ``_approvals`` (the approval engine), ``_checks`` and ``_mcp_check`` (pre-launch checks),
``_context`` (the RunContext a driver sees), ``_slots`` (process slots), ``_binding`` (thread leases, checkpoints,
persistence), ``_execution`` (one run from checks to Done), ``_engine`` (one Agent's runtime state).
"""
