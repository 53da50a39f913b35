"""HTTP handlers: request decoding, content negotiation, rendering (layer L4, aiohttp.web only here)."""
