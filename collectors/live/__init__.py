"""Live collection: agents driving real desktops through OSWorld's controller protocol,
recorded step by step into the warehouse (`deskscore collect`).

`client` speaks to a desktop's controller, `providers` starts desktops (containers, this
machine, or one already running), `agents` and `users` are the agent plug-ins and DeskCraft's
simulated user, `evaluators` scores the final state, `record` writes the warehouse as the
episode runs, and `collect` is the episode loop.
"""
