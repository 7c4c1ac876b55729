# Shared by the renderer golden generators (yamlex/gen_yamlex.py,
# toml/gen_toml.py): Salt's results in a JSON form that keeps Python's
# types (ints, floats, bytes and datetimes tagged, dicts as ordered pairs).
import base64
import datetime


def typed(v):
    if v is None or isinstance(v, (bool, str)):
        return str.__str__(v) if isinstance(v, str) else v
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, (datetime.datetime, datetime.date)):
        return {"datetime": v.strftime("%Y%m%dT%H:%M:%S.%f")}
    if isinstance(v, (list, tuple)):
        return [typed(x) for x in v]
    if isinstance(v, dict):
        return {"map": [[typed(k), typed(x)] for k, x in v.items()]}
    raise TypeError(type(v))


def run(fn, text):
    try:
        return {"value": typed(fn(text))}
    except Exception as exc:  # the exception class and text
        return {"error": type(exc).__name__, "message": str(exc)}
