"""worker/distributed"""
