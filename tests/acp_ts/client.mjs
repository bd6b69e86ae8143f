// An ACP client written with the TypeScript SDK (@agentclientprotocol/sdk): spawns the agent command
// given as arguments, runs initialize → session/new → session/prompt (approving once), closes stdin,
// and prints one JSON object: what it received and how the agent process ended.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const updates = [];
const asked = [];

const app = client({ name: "freeact-tui-ts-test" })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    asked.push({ toolCallId: params.toolCall.toolCallId, options: params.options.map((o) => o.kind) });
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onNotification(methods.client.session.update, async ({ params }) => {
    updates.push(params.update);
  });

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const session = await ctx.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
  const turn = await ctx.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "compute 6*7" }],
  });
  return { init, sessionId: session.sessionId, stopReason: turn.stopReason };
});
child.stdin.end();
const exitCode = await exited;
console.log(JSON.stringify({ ...result, updates, asked, exitCode }));
