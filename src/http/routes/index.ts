/** Every /v1 resource's routes, registered in one place. */
import type { Api } from '../api';
import type { HttpDeps } from '../deps';
import { domainRoutes } from './domains';
import { senderRoutes } from './senders';
import { mailRoutes } from './mails';
import { opensRoutes } from './opens';
import { activityRoutes } from './activities';
import { exportRoutes } from './exports';
import { statsRoutes } from './stats';
import { templateRoutes } from './templates';
import { fieldRoutes } from './fields';
import { formRoutes } from './forms';
import { suppressionRoutes } from './suppressions';
import { consentCatalogRoutes } from './consent-catalog';
import { consentEventRoutes } from './consent-events';
import { consentResolveRoutes } from './consent-resolve';

export function registerRoutes(api: Api, deps: HttpDeps): void {
  domainRoutes(api, deps);
  senderRoutes(api, deps);
  mailRoutes(api, deps);
  opensRoutes(api, deps);
  activityRoutes(api, deps);
  exportRoutes(api, deps);
  statsRoutes(api, deps);
  templateRoutes(api, deps);
  fieldRoutes(api, deps);
  formRoutes(api, deps);
  suppressionRoutes(api, deps);
  consentCatalogRoutes(api, deps);
  consentEventRoutes(api, deps);
  consentResolveRoutes(api, deps);
}
