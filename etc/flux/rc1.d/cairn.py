# Loads the "cairn-node" module that modprobe.d/cairn.toml defines (an
# entry alone loads nothing); see cairn-exec(8), "Many nodes".
def setup(context):
    context.load_modules(["cairn-node"])
