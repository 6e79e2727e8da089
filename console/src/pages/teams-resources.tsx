// Teams: the account's templates, network volumes and container registry credentials, each created,
// edited where the API allows (a volume's name and size, never its data center; a registry's
// username and password, never its name) and deleted with confirmation (ui/resource-manager.tsx).
import { useApi } from '../api.ts';
import { useLoad } from '../ui/hooks.ts';
import { ResourceManager, type FieldSpec } from '../ui/resource-manager.tsx';
import { when } from '../ui/widgets.tsx';

export function TemplatesSection() {
  const api = useApi();
  const registries = useLoad(() => api.registries.list(), []);
  const fields: FieldSpec[] = [
    { name: 'name', label: 'Template name', kind: 'text' },
    { name: 'image', label: 'Image', kind: 'text', mono: true, hint: 'e.g. ubuntu:24.04 or ghcr.io/org/worker:1' },
    { name: 'args', label: 'Start command', kind: 'text', mono: true, hint: 'Optional: the container command, e.g. sleep infinity.' },
    { name: 'disk', label: 'Container disk (GB)', kind: 'number', hint: 'Empty: 20 GB.' },
    { name: 'ports', label: 'Ports', kind: 'list', mono: true, hint: 'e.g. 8888/http 22/tcp' },
    { name: 'env', label: 'Environment', kind: 'env', hint: 'One KEY=value a line.' },
    {
      name: 'registry',
      label: 'Registry credential',
      kind: 'select',
      hint: 'For a private image.',
      options: [{ value: '', label: 'None' }, ...(registries.data ?? []).map((r) => ({ value: r.id, label: String(r.name ?? r.id) }))],
    },
    { name: 'serverless', label: 'Serverless (for endpoints, not pods)', kind: 'checkbox' },
  ];
  return (
    <ResourceManager
      title="Templates"
      singular="template"
      load={() => api.templates.list()}
      create={(b) => api.templates.create(b as never)}
      update={(id, b) => api.templates.update(id, b as never)}
      remove={(id) => api.templates.delete(id)}
      fields={fields}
      columns={[
        { label: 'Name', cell: (r) => String(r.name ?? r.id) },
        { label: 'Image', cell: (r) => <span class="mono">{String(r.image ?? '')}</span> },
        {
          label: 'For',
          cell: (r) => (r.serverless ? 'serverless endpoints' : <a href={`/console/pods/new?template=${encodeURIComponent(r.id)}`}>pods: create one</a>),
        },
      ]}
      deleteDetail="Pods and endpoints already made from it keep running; a template an endpoint uses cannot be deleted."
      write={api.write}
      empty="No templates yet."
    />
  );
}

export function VolumesSection() {
  const api = useApi();
  const dcs = useLoad(() => api.catalog.dataCenters(), []);
  const fields: FieldSpec[] = [
    { name: 'name', label: 'Volume name', kind: 'text' },
    { name: 'size', label: 'Size (GB)', kind: 'number', hint: 'It may grow later, never shrink.' },
    {
      name: 'dataCenterId',
      label: 'Data center',
      kind: 'select',
      createOnly: true,
      hint: 'Pods using it run there.',
      options: [{ value: '', label: 'Choose one' }, ...(dcs.data ?? []).map((d) => ({ value: d.id, label: String(d.name ?? d.id) }))],
    },
  ];
  return (
    <ResourceManager
      title="Network volumes"
      singular="network volume"
      load={() => api.volumes.list()}
      create={(b) => api.volumes.create(b as never)}
      update={(id, b) => api.volumes.update(id, b as never)}
      remove={(id) => api.volumes.delete(id)}
      fields={fields}
      columns={[
        { label: 'Name', cell: (r) => String(r.name ?? r.id) },
        { label: 'Size', cell: (r) => `${String(r.size ?? '—')} GB` },
        { label: 'Data center', cell: (r) => String(r.dataCenterId ?? '—') },
        { label: 'Created', cell: (r) => when(r.createdAt) },
      ]}
      deleteDetail="Its data is deleted on every host. A volume a pod still uses cannot be deleted."
      write={api.write}
      empty="No network volumes yet."
    />
  );
}

export function RegistriesSection() {
  const api = useApi();
  const fields: FieldSpec[] = [
    { name: 'name', label: 'Credential name', kind: 'text', createOnly: true },
    { name: 'username', label: 'Username', kind: 'text', hint: 'Editing: empty keeps the one stored (it is never shown).' },
    { name: 'password', label: 'Password or token', kind: 'password', hint: 'Never shown again. Editing: empty keeps it.' },
  ];
  return (
    <ResourceManager
      title="Registries"
      singular="registry credential"
      load={() => api.registries.list()}
      create={(b) => api.registries.create(b as never)}
      update={(id, b) => api.registries.update(id, b as never)}
      remove={(id) => api.registries.delete(id)}
      fields={fields}
      columns={[
        { label: 'Name', cell: (r) => String(r.name ?? r.id) },
        { label: 'Id', cell: (r) => <span class="mono">{r.id}</span> },
      ]}
      deleteDetail="A credential a pod or template still names cannot be deleted."
      write={api.write}
      empty="No registry credentials yet."
    />
  );
}
