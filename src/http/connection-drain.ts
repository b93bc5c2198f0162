/**
 * Closing every connection that has nothing in flight, at once and as each
 * becomes idle, once the server drains. Node's own `closeIdleConnections`
 * runs once and misses a connection that has not sent a request yet: an
 * HTTP client often opens a spare connection when one of its streams is
 * aborted (a subscriber leaving the event feed), and that connection then
 * held a shutdown open until the client's keep-alive timer dropped it, or
 * until the drain deadline. Requests in flight still finish; their
 * connections close when they do.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionDrain {
  /** Close the idle connections now, and each busy one when its last response ends. */
  drain(): void;
}

export function trackConnections(server: Server): ConnectionDrain {
  const inFlight = new Map<Socket, number>();
  let draining = false;
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (draining && left === 0) socket.end();
    });
  });
  return {
    drain() {
      draining = true;
      for (const [socket, n] of inFlight) if (n === 0) socket.end();
    },
  };
}
