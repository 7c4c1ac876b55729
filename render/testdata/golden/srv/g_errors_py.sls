#!py
def run():
    return {}
