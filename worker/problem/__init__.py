"""worker/problem"""
