// Drives the adaptor_nb AG-UI endpoint with the official @ag-ui/client HttpAgent and prints what the client saw as
// one JSON line. Usage: node scenarios.mjs <scenario> <url> <token>   (scenarios: plain, tool, approval, supplement)
import { createRequire } from "node:module";

const require = createRequire(process.env.AGUI_CLIENT_PREFIX + "/");
const { HttpAgent, buildResumeArray } = require("@ag-ui/client");

const [scenario, url, token] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};

function newAgent(threadId, messages = []) {
  return new HttpAgent({ url, headers, threadId, initialMessages: messages });
}

function summary(agent, extra = {}) {
  return {
    messages: agent.messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content ?? null,
      toolCalls: (m.toolCalls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      toolCallId: m.toolCallId ?? null,
    })),
    state: agent.state,
    pendingInterrupts: agent.pendingInterrupts,
    ...extra,
  };
}

async function plain(threadId) {
  const agent = newAgent(threadId, [{ id: "u1", role: "user", content: "say hello" }]);
  const { result } = await agent.runAgent({ runId: "run-1" });
  return summary(agent, { result });
}

async function approval() {
  const agent = newAgent("approval", [{ id: "u1", role: "user", content: "clean the build" }]);
  const first = await agent.runAgent({ runId: "run-1" });
  const interrupts = agent.pendingInterrupts.map((i) => ({ ...i }));
  const resume = buildResumeArray(agent.pendingInterrupts, {
    [interrupts[0].id]: { status: "resolved", payload: { approved: true } },
  });
  const second = await agent.runAgent({ runId: "run-2", resume });
  return summary(agent, { interrupts, firstResult: first.result ?? null, result: second.result });
}

async function supplement() {
  const first = newAgent("supplement", [{ id: "u1", role: "user", content: "start working" }]);
  let joined;
  const running = first.runAgent(
    { runId: "run-1" },
    {
      onTextMessageContentEvent() {
        if (joined) return;
        // While the run streams, a second client instance on the same thread sends one more message.
        const second = newAgent("supplement", [
          ...first.messages.filter((m) => m.role === "user"),
          { id: "u2", role: "user", content: "and add tests" },
        ]);
        const customs = [];
        joined = second
          .runAgent({ runId: "run-2" }, { onCustomEvent: ({ event }) => customs.push(event) })
          .then((r) => ({ result: r.result, customs }));
      },
    },
  );
  const { result } = await running;
  const other = await joined;
  const receipts = other.customs.filter((e) => e.name === "adaptor_nb.MessageUpdate").map((e) => e.value);
  return summary(first, { result, secondResult: other.result, receipts });
}

const runs = { plain: () => plain("plain"), tool: () => plain("tool"), approval, supplement };
try {
  const out = await runs[scenario]();
  process.stdout.write(JSON.stringify(out) + "\n");
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err && err.stack ? err.stack : err) }) + "\n");
  process.exitCode = 1;
}
