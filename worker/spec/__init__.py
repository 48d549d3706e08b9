"""worker/spec"""
