"""The version of dspark-ckpt: a constant every stage may name, like errors.py a leaf (the root hands it on)."""

__version__ = "0.1.0"
