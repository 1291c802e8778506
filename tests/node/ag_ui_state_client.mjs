// An AG-UI client following a Weir state stream, for tests/integration/ag_ui_client_test.cpp.
// It uses @ag-ui/client's own HTTP pipeline (runHttpRequest → transformHttpEventStream), checks
// every event against @ag-ui/core's schema, and applies them with the client's defaultApplyEvents
// (STATE_SNAPSHOT replaces, STATE_DELTA is fast-json-patch's applyPatch), as an agent would.
// Prints one line per applied event: {"type": "...", "deltas": <STATE_DELTAs so far>, "state":
// <the client's state after it>}.
// Usage: node ag_ui_state_client.mjs <state stream URL>
import {
  HttpAgent,
  defaultApplyEvents,
  runHttpRequest,
  transformHttpEventStream,
} from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { concatMap, tap } from "rxjs";

const url = process.argv[2];
const agent = new HttpAgent({ url });
const input = {
  threadId: "weir-state",
  runId: "follow",
  state: {},
  messages: [],
  tools: [],
  context: [],
  forwardedProps: {},
};

let state = {};
let deltas = 0;
const events$ = transformHttpEventStream(
  runHttpRequest(() => fetch(url, { headers: { Accept: "text/event-stream" } })),
).pipe(
  tap((event) => {
    const checked = EventSchemas.safeParse(event);
    if (!checked.success) {
      console.error(`not an AG-UI event: ${JSON.stringify(event)}: ${checked.error}`);
      process.exit(3);
    }
  }),
);

let pendingType = null;
defaultApplyEvents(
  input,
  events$.pipe(tap((e) => (pendingType = e.type))),
  agent,
  [],
)
  .pipe(
    // One mutation per applied state event: print the state the client holds now.
    concatMap(async (mutation) => {
      if (mutation.state !== undefined) {
        state = mutation.state;
      }
      if (pendingType === "STATE_DELTA") {
        deltas += 1;
      }
      console.log(JSON.stringify({ type: pendingType, deltas, state }));
    }),
  )
  .subscribe({
    error: (e) => {
      console.error(`stream failed: ${e}`);
      process.exit(2);
    },
    complete: () => process.exit(0),
  });
