"""The built-in countermeasures a preset names, one module each with its builder and its
action (:mod:`.base` holds what they share). They are found by name through
:data:`steadybench.registry.countermeasures`, like a plug-in's (``docs/extending.md``)."""
