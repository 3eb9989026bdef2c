"""Notebook cell sources shared by the kernel and browser tests."""

PACED_AGENT = '''
import asyncio
from adaptor_nb import Agent, TextDelta
from adaptor_nb.driver import Descriptor, DriverOutcome


class Paced:
    """Streams numbered words in small batches with pauses, as one message."""

    name = "paced"

    def descriptor(self):
        return Descriptor(name="paced", provider="test")

    def validate_config(self):
        return None

    def config_fingerprint(self):
        return "paced"

    async def run(self, invocation, ctx):
        words = [f"w{i} " for i in range(3000)]
        for start in range(0, len(words), 100):
            for w in words[start:start + 100]:
                await ctx.emit(TextDelta(text=w, message_id="m"))
            await asyncio.sleep(0.05)
        await ctx.turn_end(text="".join(words))
        return DriverOutcome(text="".join(words), provider="test", model="paced")


agent = Agent(Paced(), blocking_events=True)
expected = "".join(f"w{i} " for i in range(3000))
'''
