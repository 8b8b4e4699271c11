"""Hybrid search: vector and keyword hits fused, ranked, cited and excerpted."""
