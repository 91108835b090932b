"""mavtrain: trains and exports the model formats mavboard loads (mav-lm, mav-encoder, action-value).

Commands: `python -m mavtrain.train` and `python -m mavtrain.export` (see training/README.md).
"""

__version__ = "0.1.0"
