//! Authorization as Apache Fluss's `DefaultAuthorizer` does it: the ACL store (persisted in
//! `acls.json` of the data directory, so ACLs survive a restart), the super users of
//! `super.users`, and the decision whether a session may do an operation on a resource. The
//! rules (what an ACL grants, which resources' ACLs apply) are `riverlet::acl`'s; which
//! operation each API needs is the served-API table (`service/apis.rs`).
//!
//! With `authorizer.enabled` off every request is allowed and the ACL APIs answer
//! SECURITY_DISABLED_EXCEPTION ("No Authorizer is configured."), as Fluss does. With it on, a
//! resource without a matching ACL is refused to everyone but the super users.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Mutex, RwLock};

use riverlet::acl::{self, AclBinding, AclFilter, OperationType, Principal, Resource};
use riverlet::error::codes;
use riverlet::{Error, Result};

/// Who sends a request, and from where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The principal of the connection: `User:<name>` after SASL/PLAIN, `User:ANONYMOUS` on a
    /// listener without authentication (Fluss's `PlainTextAuthenticationPlugin`).
    pub principal: Principal,
    /// The client's IP address, as ACL hosts name it.
    pub host: String,
    /// The server's own calls (never refused), like Fluss's internal sessions.
    pub internal: bool,
}

impl Session {
    /// A client session.
    pub fn new(principal: Principal, host: impl Into<String>) -> Self {
        Session {
            principal,
            host: host.into(),
            internal: false,
        }
    }

    /// The server's own session (not authorized).
    pub fn internal() -> Self {
        Session {
            principal: Principal::anonymous(),
            host: "127.0.0.1".into(),
            internal: true,
        }
    }
}

/// The file of the ACLs in the data directory.
pub const ACL_FILE: &str = "acls.json";

/// The ACL store and the authorization decisions.
pub struct Authorizer {
    enabled: bool,
    super_users: Vec<Principal>,
    file: PathBuf,
    acls: RwLock<BTreeSet<AclBinding>>,
    /// Serializes changes (and their file writes).
    changes: Mutex<()>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("enabled", &self.enabled)
            .field("super_users", &self.super_users)
            .finish()
    }
}

impl Authorizer {
    /// Opens the store of `data_dir` (loading its ACLs; a file that does not parse is an
    /// error naming it).
    pub fn open(
        data_dir: &std::path::Path,
        enabled: bool,
        super_users: Vec<Principal>,
    ) -> Result<Self> {
        let file = data_dir.join(ACL_FILE);
        let acls = match std::fs::read(&file) {
            Ok(bytes) => decode_file(&bytes)
                .map_err(|e| e.context(format!("ACL file {}", file.display())))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
            Err(e) => {
                return Err(Error::from(e).context(format!("ACL file {}", file.display())));
            }
        };
        Ok(Authorizer {
            enabled,
            super_users,
            file,
            acls: RwLock::new(acls),
            changes: Mutex::new(()),
        })
    }

    /// Whether `authorizer.enabled` is set.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether `session` may do `operation` on `resource` (Fluss's `isAuthorized`).
    pub fn is_authorized(
        &self,
        session: &Session,
        operation: OperationType,
        resource: &Resource,
    ) -> bool {
        if !self.enabled || session.internal || self.super_users.contains(&session.principal) {
            return true;
        }
        let acls = self.acls.read().unwrap_or_else(|p| p.into_inner());
        let applying = resource.inherited_from();
        acls.iter().any(|b| {
            applying.contains(&b.resource) && b.grants(&session.principal, &session.host, operation)
        })
    }

    /// `Ok` when `session` may do `operation` on `resource`, otherwise
    /// AUTHORIZATION_EXCEPTION naming the principal, the operation and the resource.
    pub fn authorize(
        &self,
        session: &Session,
        operation: OperationType,
        resource: &Resource,
    ) -> Result<()> {
        if self.is_authorized(session, operation, resource) {
            Ok(())
        } else {
            tracing::debug!("{} refused {operation} on {resource}", session.principal);
            Err(acl::denied(&session.principal, operation, resource))
        }
    }

    fn require_enabled(&self) -> Result<()> {
        if self.enabled {
            Ok(())
        } else {
            Err(Error::from_fluss(
                codes::SECURITY_DISABLED_EXCEPTION,
                "No Authorizer is configured.",
            ))
        }
    }

    /// Changing a resource's ACLs needs ALTER on it (a table's: on its database).
    fn authorize_acl_change<'a>(
        &self,
        session: &Session,
        resources: impl IntoIterator<Item = &'a Resource>,
    ) -> Result<()> {
        for r in resources {
            self.authorize(session, OperationType::Alter, &r.acl_admin_resource())?;
        }
        Ok(())
    }

    /// Adds bindings (Fluss's `addAcls`): one result per binding, in order. The whole call
    /// fails when the session may not alter one of the resources.
    pub fn create(&self, session: &Session, bindings: Vec<AclBinding>) -> Result<Vec<Result<()>>> {
        self.require_enabled()?;
        self.authorize_acl_change(session, bindings.iter().map(|b| &b.resource))?;
        let _g = self.changes.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = self.snapshot();
        let results: Vec<Result<()>> = bindings
            .into_iter()
            .map(|b| {
                b.validate()?;
                next.insert(b);
                Ok(())
            })
            .collect();
        self.store(next)?;
        Ok(results)
    }

    /// The bindings matching `filter` on resources the session may DESCRIBE (Fluss's
    /// `listAcls`).
    pub fn list(&self, session: &Session, filter: &AclFilter) -> Result<Vec<AclBinding>> {
        self.require_enabled()?;
        let acls = self.snapshot();
        Ok(acls
            .into_iter()
            .filter(|b| {
                filter.matches(b)
                    && self.is_authorized(session, OperationType::Describe, &b.resource)
            })
            .collect())
    }

    /// Removes the bindings matching each filter (Fluss's `dropAcls`): per filter, the
    /// bindings it removed (a binding matched by several filters is reported by the first).
    /// The whole call fails when the session may not alter one of the matched resources.
    pub fn drop(&self, session: &Session, filters: &[AclFilter]) -> Result<Vec<Vec<AclBinding>>> {
        self.require_enabled()?;
        let _g = self.changes.lock().unwrap_or_else(|p| p.into_inner());
        let current = self.snapshot();
        let resources: BTreeSet<&Resource> = current
            .iter()
            .map(|b| &b.resource)
            .filter(|r| filters.iter().any(|f| f.matches_resource(r)))
            .collect();
        self.authorize_acl_change(session, resources)?;
        let mut out = vec![Vec::new(); filters.len()];
        let mut next = BTreeSet::new();
        for b in current {
            match filters.iter().position(|f| f.matches(&b)) {
                Some(i) => out[i].push(b),
                None => {
                    next.insert(b);
                }
            }
        }
        self.store(next)?;
        Ok(out)
    }

    fn snapshot(&self) -> BTreeSet<AclBinding> {
        self.acls.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Writes `acls` to the file (temporary file, fsync, rename), then makes them current.
    fn store(&self, acls: BTreeSet<AclBinding>) -> Result<()> {
        let bytes = encode_file(&acls);
        let tmp = self.file.with_extension("json.tmp");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.file)?;
            if let Some(dir) = self.file.parent() {
                if let Ok(d) = std::fs::File::open(dir) {
                    let _ = d.sync_all();
                }
            }
            Ok(())
        };
        write().map_err(|e| Error::from(e).context(format!("ACL file {}", self.file.display())))?;
        *self.acls.write().unwrap_or_else(|p| p.into_inner()) = acls;
        Ok(())
    }
}

/// `{"version":1,"acls":[{"resource_type":"TABLE","resource_name":"db.t","principal_type":
/// "User","principal_name":"alice","host":"*","operation":"READ","permission":"ALLOW"}]}`
fn encode_file(acls: &BTreeSet<AclBinding>) -> Vec<u8> {
    let list: Vec<serde_json::Value> = acls
        .iter()
        .map(|b| {
            serde_json::json!({
                "resource_type": b.resource.resource_type.as_str(),
                "resource_name": b.resource.name,
                "principal_type": b.principal.principal_type,
                "principal_name": b.principal.name,
                "host": b.host,
                "operation": b.operation.as_str(),
                "permission": b.permission.as_str(),
            })
        })
        .collect();
    let doc = serde_json::json!({ "version": 1, "acls": list });
    serde_json::to_vec_pretty(&doc).unwrap_or_default()
}

fn decode_file(bytes: &[u8]) -> Result<BTreeSet<AclBinding>> {
    let bad = |m: String| Error::corrupt(m);
    let doc: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
    let list = doc
        .get("acls")
        .and_then(|v| v.as_array())
        .ok_or_else(|| bad("no \"acls\" list".into()))?;
    let mut out = BTreeSet::new();
    for (i, v) in list.iter().enumerate() {
        let field = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .ok_or_else(|| bad(format!("ACL #{i} has no text field \"{k}\"")))
        };
        out.insert(AclBinding {
            resource: Resource::new(
                acl::ResourceType::parse(field("resource_type")?)?,
                field("resource_name")?,
            ),
            principal: Principal::new(field("principal_type")?, field("principal_name")?),
            host: field("host")?.to_string(),
            operation: OperationType::parse(field("operation")?)?,
            permission: acl::PermissionType::parse(field("permission")?)?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_round_trips() {
        let mut acls = BTreeSet::new();
        acls.insert(AclBinding::allow(
            Resource::table("d", "t"),
            Principal::user("a"),
            OperationType::Read,
        ));
        acls.insert(
            AclBinding::allow(
                Resource::cluster(),
                Principal::wildcard(),
                OperationType::All,
            )
            .from_host("10.1.1.1"),
        );
        assert_eq!(decode_file(&encode_file(&acls)).unwrap(), acls);
        assert!(decode_file(b"{}").is_err());
    }
}
