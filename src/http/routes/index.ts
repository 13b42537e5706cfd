/** Every /v1 resource's routes, registered in one place. */
import type { Api } from '../api';
import type { HttpDeps } from '../deps';
import { domainRoutes } from './domains';
import { senderRoutes } from './senders';

export function registerRoutes(api: Api, deps: HttpDeps): void {
  domainRoutes(api, deps);
  senderRoutes(api, deps);
}
