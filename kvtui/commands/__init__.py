"""One module per subcommand: `configure(parser)` adds its flags, `run(args)` does the work.

Keep module-level imports light (stdlib only): `kvtui --help` imports every one of them.
"""
