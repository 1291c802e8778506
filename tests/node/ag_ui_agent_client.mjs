// An AG-UI frontend running Weir as an agent, for tests/integration/ag_ui_client_test.cpp: the
// main API of @ag-ui/client, HttpAgent.runAgent, POSTs its RunAgentInput to Weir's agent
// endpoint and applies what comes back with the client's own pipeline (verifyEvents, then
// defaultApplyEvents). Every event is checked against @ag-ui/core's schema.
// Prints one JSON line per lifecycle event and per state change:
//   {"type":"RUN_STARTED","threadId","runId"}, {"type":"state","deltas","snapshots","state"},
//   {"type":"RUN_FINISHED",…} or {"type":"RUN_ERROR","code","message"}, and, once runAgent's
//   promise resolves, {"type":"done","deltas","state"}.
// Usage: node ag_ui_agent_client.mjs <agent endpoint URL>
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";

const url = process.argv[2];
const agent = new HttpAgent({ url, threadId: "weir-thread", initialState: {} });
let deltas = 0;
let snapshots = 0;
const print = (line) => console.log(JSON.stringify(line));

agent.subscribe({
  onEvent: ({ event }) => {
    const checked = EventSchemas.safeParse(event);
    if (!checked.success) {
      console.error(`not an AG-UI event: ${JSON.stringify(event)}: ${checked.error}`);
      process.exit(3);
    }
  },
  onRunStartedEvent: ({ event }) =>
    print({ type: "RUN_STARTED", threadId: event.threadId, runId: event.runId }),
  onStateSnapshotEvent: () => {
    snapshots += 1;
  },
  onStateDeltaEvent: () => {
    deltas += 1;
  },
  onStateChanged: ({ state }) => print({ type: "state", deltas, snapshots, state }),
  onRunFinishedEvent: ({ event }) =>
    print({ type: "RUN_FINISHED", threadId: event.threadId, runId: event.runId }),
  onRunErrorEvent: ({ event }) =>
    print({ type: "RUN_ERROR", code: event.code, message: event.message }),
});

try {
  await agent.runAgent({ runId: "run-1" });
  print({ type: "done", deltas, state: agent.state });
  process.exit(0);
} catch (e) {
  console.error(`runAgent failed: ${e}`);
  process.exit(2);
}
