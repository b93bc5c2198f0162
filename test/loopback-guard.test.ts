/** Which requests a loopback-bound server answers on MCP: the DNS-rebinding guard, directly. */
import { describe, expect, it } from 'vitest';
import { foreignHost } from '../src/http/loopback-guard.js';

describe('the loopback guard', () => {
  it('lets loopback hosts and origins through to a loopback server', () => {
    for (const host of ['127.0.0.1:8080', 'localhost:8080', '[::1]:8080', '127.1.2.3', 'LOCALHOST'])
      expect(foreignHost({ bound: '127.0.0.1', host, origin: undefined }), host).toBeUndefined();
    expect(foreignHost({ bound: '127.0.0.1', host: 'localhost:1', origin: 'http://127.0.0.1:3000' })).toBeUndefined();
  });

  it('refuses a rebound name, a foreign or opaque origin, and a missing Host', () => {
    expect(foreignHost({ bound: '127.0.0.1', host: 'attacker.example:8080', origin: undefined })).toMatch(/Host/);
    expect(foreignHost({ bound: 'localhost', host: 'localhost', origin: 'https://attacker.example' })).toMatch(/Origin/);
    expect(foreignHost({ bound: '::1', host: '[::1]', origin: 'null' })).toMatch(/opaque/);
    expect(foreignHost({ bound: '127.0.0.1', host: undefined, origin: undefined })).toMatch(/Host/);
    expect(foreignHost({ bound: '127.0.0.1', host: '127.0.0.1.attacker.example', origin: undefined })).toMatch(/Host/);
  });

  it('leaves a server bound to another address to its tokens', () => {
    expect(foreignHost({ bound: '0.0.0.0', host: 'branchgraph.internal', origin: 'https://app.example' })).toBeUndefined();
  });
});
