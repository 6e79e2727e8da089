// The signed-in console's view of the public API: client/'s typed groups over one ApiClient, and
// the session (scope and operator decide which controls are offered; the server refuses anyway).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import {
  AccountApi,
  AccountsApi,
  BillingApi,
  CatalogApi,
  EndpointsApi,
  EventsApi,
  HostsApi,
  JobsApi,
  NetworkVolumesApi,
  PodsApi,
  PublicEndpointsApi,
  RegistriesApi,
  TemplatesApi,
  type ApiClient,
} from '../../client/index.ts';
import { canWrite, clientOf, isAdmin, type Session } from './session.ts';

export interface Api {
  session: Session;
  client: ApiClient;
  /** the key may change things (read_write or admin) */
  write: boolean;
  /** the key may manage keys (admin) */
  admin: boolean;
  pods: PodsApi;
  endpoints: EndpointsApi;
  jobs: JobsApi;
  templates: TemplatesApi;
  volumes: NetworkVolumesApi;
  registries: RegistriesApi;
  models: PublicEndpointsApi;
  catalog: CatalogApi;
  billing: BillingApi;
  events: EventsApi;
  account: AccountApi;
  accounts: AccountsApi;
  /** the fleet's hosts and their GPUs' metrics (operators) */
  hosts: HostsApi;
}

export function apiOf(session: Session, client: ApiClient = clientOf(session)): Api {
  return {
    session,
    client,
    write: canWrite(session),
    admin: isAdmin(session),
    pods: new PodsApi(client),
    endpoints: new EndpointsApi(client),
    jobs: new JobsApi(client),
    templates: new TemplatesApi(client),
    volumes: new NetworkVolumesApi(client),
    registries: new RegistriesApi(client),
    models: new PublicEndpointsApi(client),
    catalog: new CatalogApi(client),
    billing: new BillingApi(client),
    events: new EventsApi(client),
    account: new AccountApi(client),
    accounts: new AccountsApi(client),
    hosts: new HostsApi(client),
  };
}

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside a signed-in console');
  return api;
}
