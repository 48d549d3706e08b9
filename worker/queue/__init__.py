"""worker/queue"""
