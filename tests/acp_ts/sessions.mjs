// An ACP client written with the TypeScript SDK (@agentclientprotocol/sdk, its unstable entry point for
// session/fork): the session features of freeact-tui acp — the model config option, a mode (set_mode and
// current_mode_update, kept by resume and fork), commands announced and run, two prompts sent at once, resume, fork, usage, and the error for an unknown session.
// Prints one JSON object of what it received.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk/unstable";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const updates = [];
const text = (t) => [{ type: "text", text: t }];
const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error: { code: error.code, message: error.message } }));

const app = client({ name: "freeact-tui-ts-sessions" })
  .onRequest(methods.client.session.requestPermission, async () => ({ outcome: { outcome: "cancelled" } }))
  .onNotification(methods.client.session.update, async ({ params }) => {
    updates.push({ sessionId: params.sessionId, ...params.update });
  });

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const cwd = process.cwd();
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const sessionId = session.sessionId;
  const set = await ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "other-model" });
  const mode = await settle(ctx.request(methods.agent.session.setMode, { sessionId, modeId: "plan" }));
  const both = await Promise.all([
    ctx.request(methods.agent.session.prompt, { sessionId, prompt: text("first") }),
    ctx.request(methods.agent.session.prompt, { sessionId, prompt: text("second") }),
  ]);
  const command = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: text("/context") });
  const resumed = await settle(ctx.request(methods.agent.session.resume, { sessionId, cwd, mcpServers: [] }));
  const fork = await ctx.request(methods.agent.session.fork, { sessionId, cwd, mcpServers: [] });
  const unknown = await settle(ctx.request(methods.agent.session.close, { sessionId: "00000000-0000-4000-8000-000000000000" }));
  const closed = await settle(ctx.request(methods.agent.session.close, { sessionId: fork.sessionId }));
  return {
    init, session, set, stopReasons: both.map((r) => r.stopReason), command: command.stopReason,
    resumed, forkId: fork.sessionId, unknown, closed, mode, forkMode: fork.modes?.currentModeId,
  };
});
child.stdin.end();
const exitCode = await exited;
console.log(JSON.stringify({ ...result, updates, exitCode }));
