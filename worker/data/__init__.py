"""worker/data"""
