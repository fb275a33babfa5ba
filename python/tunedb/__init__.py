"""Python client of tunedbd, the persistent cuDNN convolution autotuning
daemon.

    import tunedb
    db = tunedb.Client("unix:/run/tunedb/tunedb.sock")
    p = tunedb.conv(N=64, C=256, H=14, W=14, K=256, R=3, S=3, padding=1,
                    dtype="float16", memory_format="channels_last")
    db.tune(p)["choice"]["algo"]      # searches once per GPU model
    db.lookup(p)                      # the stored answer, or None
    for record in db.query(op="fwd"): ...
    db.devices(), db.stats()
"""
from tunedb.client import DEFAULT_ADDRESS, Client, Error, to_dict
from tunedb.problem import as_problem, conv, problem

__all__ = ["Client", "Error", "DEFAULT_ADDRESS", "conv", "problem",
           "as_problem", "to_dict"]
__version__ = "0.1.0"
