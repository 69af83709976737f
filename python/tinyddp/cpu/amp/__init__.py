from tinyddp.cpu.amp.autocast_mode import autocast  # noqa: F401
