"""worker/candidates"""
