/**
 * The per-run MCP server on its own, with the official MCP client: only a holder of the
 * run's bearer token gets in, it lists exactly the run's tools, a call goes to the runtime's
 * `callTool`, and a refused call comes back as a tool error while the step learns why.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DriverError } from '../../../src/protocol/errors.js';
import { startToolBridge } from '../../../src/providers/cli/mcp-bridge.js';
import type { ToolCall } from '../../../src/runtime/types.js';

const tools = [{ name: 'lookup', description: 'Looks a key up.', inputSchema: { type: 'object', properties: { key: { type: 'string' } } } }];

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

test('lists the run tools and routes calls to callTool', async () => {
  const calls: ToolCall[] = [];
  const bridge = await startToolBridge(tools, async (call) => {
    calls.push(call);
    return JSON.stringify({ value: `value-of-${String(call.arguments.key)}` });
  }, () => assert.fail('no failure expected'));
  try {
    const client = await connect(bridge.url, bridge.token);
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['lookup']);
    const result = await client.callTool({ name: 'lookup', arguments: { key: 'alpha' } });
    assert.deepEqual(result.content, [{ type: 'text', text: '{"value":"value-of-alpha"}' }]);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.name, 'lookup');
    assert.match(calls[0]!.id, /^mcp-/);
    await client.close();
  } finally {
    await bridge.close();
  }
});

test('a refused call is a tool error for the CLI and the failure for the step', async () => {
  const failures: DriverError[] = [];
  const bridge = await startToolBridge(tools, async () => {
    throw new DriverError('APPROVAL_DENIED', 'The call to lookup was denied.');
  }, (error) => failures.push(error));
  try {
    const client = await connect(bridge.url, bridge.token);
    const result = await client.callTool({ name: 'lookup', arguments: { key: 'alpha' } });
    assert.equal(result.isError, true);
    assert.equal(failures[0]?.code, 'APPROVAL_DENIED');
    assert.equal(bridge.failure?.code, 'APPROVAL_DENIED');
    await client.close();
  } finally {
    await bridge.close();
  }
});

test('without the run token nothing gets in', async () => {
  const bridge = await startToolBridge(tools, async () => assert.fail('never called'), () => {});
  try {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${bridge.token}x`]) {
      const response = await fetch(bridge.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(response.status, 401);
    }
    await assert.rejects(connect(bridge.url, 'not-the-token'));
    assert.match(bridge.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  } finally {
    await bridge.close();
  }
});
