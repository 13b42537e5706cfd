/** Prometheus metrics (prom-client): one registry per service instance, served at /metrics. */
import client from 'prom-client';

export interface Metrics {
  registry: client.Registry;
  httpRequests: client.Counter<'method' | 'status'>;
  render: () => Promise<{ type: string; body: string }>;
}

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const httpRequests = new client.Counter({ name: 'estafeta_http_requests_total', help: 'HTTP requests by method and status', labelNames: ['method', 'status'] as const, registers: [registry] });
  return { registry, httpRequests, render: async () => ({ type: registry.contentType, body: await registry.metrics() }) };
}
