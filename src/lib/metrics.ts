/**
 * Prometheus metrics (prom-client): one registry per service instance, served at /metrics.
 * What an operator of Postfix reads from its logs, as series: sends accepted and refused per door,
 * what became of their recipients at acceptance, each delivery attempt's outcome, the queue.
 */
import client from 'prom-client';

export interface Metrics {
  registry: client.Registry;
  httpRequests: client.Counter<'method' | 'status'>;
  /** Sends (messages) acknowledged, by door (http, smtp). */
  acceptedMessages: client.Counter<'door'>;
  /** Their recipients by what acceptance made of them: queued, captured (sandbox), dropped. */
  acceptedRecipients: client.Counter<'door' | 'result'>;
  /** Sends refused, by the door that answered and the spec's code (format checks of the door included). */
  refusedSends: client.Counter<'door' | 'code'>;
  /** Delivery attempts by outcome: sent, deferred, bounced, dropped. */
  deliveryOutcomes: client.Counter<'outcome'>;
  /** Reads the queue's size when scraped (messages with recipients still to deliver). */
  watchQueue: (count: () => number) => void;
  /** Reads the bytes of inbound reports the MX holds while receiving them, when scraped. */
  watchHeldReports: (bytes: () => number) => void;
  render: () => Promise<{ type: string; body: string }>;
}

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const httpRequests = new client.Counter({ name: 'estafeta_http_requests_total', help: 'HTTP requests by method and status', labelNames: ['method', 'status'] as const, registers });
  const acceptedMessages = new client.Counter({ name: 'estafeta_accepted_messages_total', help: 'Sends acknowledged (HTTP 200, SMTP 250), by door', labelNames: ['door'] as const, registers });
  const acceptedRecipients = new client.Counter({ name: 'estafeta_accepted_recipients_total', help: 'Recipients of acknowledged sends, by door and what acceptance made of them (queued, captured by the sandbox, dropped)', labelNames: ['door', 'result'] as const, registers });
  const refusedSends = new client.Counter({ name: 'estafeta_refused_sends_total', help: 'Sends refused, by door and error code', labelNames: ['door', 'code'] as const, registers });
  const deliveryOutcomes = new client.Counter({ name: 'estafeta_delivery_outcomes_total', help: 'Outcomes the delivery loop wrote, by kind (sent, deferred, bounced, dropped); a drop, a DNS verdict or a queue-age expiry needs no connection', labelNames: ['outcome'] as const, registers });
  let queued: () => number = () => 0;
  new client.Gauge({ name: 'estafeta_queue_messages', help: 'Messages with recipients still to deliver (queued or deferred)', registers, collect() { this.set(queued()); } });
  let held: () => number = () => 0;
  new client.Gauge({ name: 'estafeta_mx_report_bytes_held', help: 'Bytes of inbound reports (DSNs, complaints) the MX holds while receiving and parsing them; past 64 MiB the next is deferred with 452', registers, collect() { this.set(held()); } });
  return {
    registry, httpRequests, acceptedMessages, acceptedRecipients, refusedSends, deliveryOutcomes,
    watchQueue: (count) => { queued = count; },
    watchHeldReports: (bytes) => { held = bytes; },
    render: async () => ({ type: registry.contentType, body: await registry.metrics() }),
  };
}
