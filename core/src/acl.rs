//! Access control lists as Apache Fluss defines them (`fluss-common`'s `security.acl` and the
//! server's `DefaultAuthorizer`): the types, their wire codes, the text forms, and the rules
//! that decide whether an ACL grants an operation.
//!
//! The rules, each defined once here (the embedded server's authorizer calls them):
//! - [`OperationType::granted_by`]: `ALL` grants every operation; `DESCRIBE` is also granted by
//!   `READ`, `WRITE`, `CREATE`, `DROP` and `ALTER`;
//! - [`Resource::inherited_from`]: a table's ACLs are its own, its database's and the
//!   cluster's; a database's are its own and the cluster's; plus the wildcard (`*`) resource of
//!   the same type;
//! - [`AclBinding::grants`]: an `ALLOW` entry whose principal is the caller's (or the wildcard
//!   `*:*`) and whose host is the caller's address (or `*`);
//! - [`AclFilter::matches`]: Fluss's `AclBindingFilter` (absent fields and the `ANY` codes
//!   match everything; a resource name is only compared when the resource type is not `ANY`).
//!
//! A denied request fails with Fluss's `AUTHORIZATION_EXCEPTION` (48, kind
//! [`crate::ErrorKind::Authentication`]); [`is_authorization_error`] tells it apart, and its
//! message ([`denial_message`]) names the principal, the operation and the resource.

use std::fmt;

use crate::error::codes;
use crate::proto::{PbAclFilter, PbAclInfo};
use crate::{Error, Result};

/// The name of the cluster resource (Fluss's `Resource.FLUSS_CLUSTER`).
pub const CLUSTER_NAME: &str = "fluss-cluster";
/// The wildcard resource name: an ACL on `(TABLE, "*")` covers every table.
pub const WILDCARD_RESOURCE: &str = "*";
/// The wildcard host: an ACL with host `*` applies to clients on every host.
pub const WILDCARD_HOST: &str = "*";

macro_rules! coded_enum {
    ($(#[$m:meta])* $name:ident, $what:literal { $($(#[$vm:meta])* $v:ident = $code:literal $text:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vm])* $v),*
        }

        impl $name {
            /// Every value, in code order.
            pub const ALL_VALUES: &'static [$name] = &[$($name::$v),*];

            /// The code on the wire.
            pub fn code(self) -> i32 {
                match self { $($name::$v => $code),* }
            }

            /// The value of a wire code; an unknown code is an error naming it.
            pub fn from_code(code: i32) -> Result<Self> {
                match code {
                    $($code => Ok($name::$v),)*
                    _ => Err(Error::invalid(format!(concat!("unknown ", $what, " code {}"), code))),
                }
            }

            /// Fluss's enum name (`READ`, `TABLE`, `ALLOW`...).
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $text),* }
            }

            /// The value of a name, case-insensitively; an unknown name is an error listing
            /// the known ones.
            pub fn parse(text: &str) -> Result<Self> {
                let t = text.trim();
                $(if t.eq_ignore_ascii_case($text) { return Ok($name::$v); })*
                let known: Vec<&str> = Self::ALL_VALUES.iter().map(|v| v.as_str()).collect();
                Err(Error::invalid(format!(
                    concat!("unknown ", $what, " '{}'; expected one of {}"),
                    text,
                    known.join(", ")
                )))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

coded_enum!(
    /// What an ACL lets a principal do (Fluss's `OperationType`).
    OperationType, "operation type" {
        /// Matches any operation; only in filters.
        Any = 1 "ANY",
        /// Every operation.
        All = 2 "ALL",
        /// Read data (fetch, lookup, scan).
        Read = 3 "READ",
        /// Write data (produce, upsert, partitions).
        Write = 4 "WRITE",
        /// Create databases (on the cluster) and tables (on a database).
        Create = 5 "CREATE",
        /// Drop a database or a table.
        Drop = 6 "DROP",
        /// Alter a table; manage ACLs.
        Alter = 7 "ALTER",
        /// See a resource's metadata.
        Describe = 8 "DESCRIBE",
    }
);

coded_enum!(
    /// The kind of a resource (Fluss's `ResourceType`).
    ResourceType, "resource type" {
        /// Matches any resource type; only in filters.
        Any = 1 "ANY",
        /// The whole cluster.
        Cluster = 2 "CLUSTER",
        /// One database.
        Database = 3 "DATABASE",
        /// One table.
        Table = 4 "TABLE",
    }
);

coded_enum!(
    /// Whether an ACL allows (Fluss has no DENY yet).
    PermissionType, "permission type" {
        /// Matches any permission; only in filters.
        Any = 1 "ANY",
        /// Allows the operation.
        Allow = 2 "ALLOW",
    }
);

impl OperationType {
    /// The operations an ACL may name to grant `self` (besides `ALL`, which grants every
    /// operation): `DESCRIBE` is granted by `DESCRIBE`, `READ`, `WRITE`, `CREATE`, `DROP` and
    /// `ALTER`; any other operation only by itself (Fluss's `DefaultAuthorizer.OPS_MAPPING`).
    pub fn granted_by(self) -> &'static [OperationType] {
        use OperationType::*;
        match self {
            Describe => &[Describe, Read, Write, Create, Drop, Alter],
            Any => &[Any],
            All => &[All],
            Read => &[Read],
            Write => &[Write],
            Create => &[Create],
            Drop => &[Drop],
            Alter => &[Alter],
        }
    }
}

/// An identity: `type:name`, e.g. `User:alice` (Fluss's `FlussPrincipal`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Principal {
    /// The principal type (`User` for SASL logins).
    pub principal_type: String,
    /// The name (the SASL user name).
    pub name: String,
}

impl Principal {
    /// A principal of type `type_` named `name`.
    pub fn new(principal_type: impl Into<String>, name: impl Into<String>) -> Self {
        Principal {
            principal_type: principal_type.into(),
            name: name.into(),
        }
    }

    /// `User:<name>`: the principal of a SASL/PLAIN login.
    pub fn user(name: impl Into<String>) -> Self {
        Principal::new("User", name)
    }

    /// `User:ANONYMOUS`: the principal of a connection that did not authenticate.
    pub fn anonymous() -> Self {
        Principal::user("ANONYMOUS")
    }

    /// `*:*`: an ACL for it applies to every principal.
    pub fn wildcard() -> Self {
        Principal::new("*", "*")
    }

    /// Parses `Type:name` (e.g. `User:alice`); `*` alone is the wildcard principal. Anything
    /// without exactly one `:` and non-empty parts is an error naming the text.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        if t == "*" {
            return Ok(Principal::wildcard());
        }
        match t.split(':').collect::<Vec<_>>().as_slice() {
            [ty, name] if !ty.trim().is_empty() && !name.trim().is_empty() => {
                Ok(Principal::new(ty.trim(), name.trim()))
            }
            _ => Err(Error::invalid(format!(
                "invalid principal '{text}': expected PrincipalType:PrincipalName, e.g. User:alice"
            ))),
        }
    }

    /// Parses Fluss's `super.users`: principals separated by `;` (e.g.
    /// `User:admin;User:ops`); empty parts are skipped.
    pub fn parse_list(text: &str) -> Result<Vec<Self>> {
        text.split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Principal::parse)
            .collect()
    }

    /// Fluss's `FlussPrincipal.toString()`: `FlussPrincipal{name='alice', type='User'}`.
    pub fn fluss_string(&self) -> String {
        format!(
            "FlussPrincipal{{name='{}', type='{}'}}",
            self.name, self.principal_type
        )
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

/// A cluster, database or table an ACL is attached to (Fluss's `Resource`). A table's name is
/// `database.table`; the cluster's is [`CLUSTER_NAME`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Resource {
    /// Its type.
    pub resource_type: ResourceType,
    /// Its name.
    pub name: String,
}

impl Resource {
    /// A resource of a type and name as given.
    pub fn new(resource_type: ResourceType, name: impl Into<String>) -> Self {
        Resource {
            resource_type,
            name: name.into(),
        }
    }

    /// The cluster.
    pub fn cluster() -> Self {
        Resource::new(ResourceType::Cluster, CLUSTER_NAME)
    }

    /// A database.
    pub fn database(name: impl Into<String>) -> Self {
        Resource::new(ResourceType::Database, name)
    }

    /// A table of a database.
    pub fn table(database: &str, table: &str) -> Self {
        Resource::new(ResourceType::Table, format!("{database}.{table}"))
    }

    /// Parses the text form Fluss's ACL procedures take: `cluster`, `cluster.<db>` or
    /// `cluster.<db>.<table>`. Anything else is an error naming the text.
    pub fn parse(text: &str) -> Result<Self> {
        let parts: Vec<&str> = text.trim().split('.').collect();
        let bad = || {
            Error::invalid(format!(
                "invalid resource '{text}': expected cluster, cluster.<database> or \
                 cluster.<database>.<table>"
            ))
        };
        if !parts[0].eq_ignore_ascii_case("cluster") || parts.iter().any(|p| p.is_empty()) {
            return Err(bad());
        }
        match parts.as_slice() {
            [_] => Ok(Resource::cluster()),
            [_, db] => Ok(Resource::database(*db)),
            [_, db, table] => Ok(Resource::table(db, table)),
            _ => Err(bad()),
        }
    }

    /// The text form [`Resource::parse`] reads: `cluster`, `cluster.<db>`,
    /// `cluster.<db>.<table>` (a resource of another type: `TYPE:name`).
    pub fn text(&self) -> String {
        match self.resource_type {
            ResourceType::Cluster if self.name == CLUSTER_NAME => "cluster".to_string(),
            ResourceType::Database if !self.name.contains('.') => format!("cluster.{}", self.name),
            ResourceType::Table if self.name.split('.').count() == 2 => {
                format!("cluster.{}", self.name)
            }
            _ => format!("{}:{}", self.resource_type, self.name),
        }
    }

    /// The database of a database or table resource.
    pub fn database_name(&self) -> Option<&str> {
        match self.resource_type {
            ResourceType::Database => Some(&self.name),
            ResourceType::Table => Some(self.name.split('.').next().unwrap_or("")),
            _ => None,
        }
    }

    /// The resources whose ACLs apply to this one: itself, its database (for a table), the
    /// cluster, and the wildcard resource of its own type (Fluss's `RESOURCE_MAPPING` and
    /// `matchingAcls`).
    pub fn inherited_from(&self) -> Vec<Resource> {
        let mut out = vec![self.clone()];
        match self.resource_type {
            ResourceType::Table => {
                out.push(Resource::database(self.database_name().unwrap_or("")));
                out.push(Resource::cluster());
            }
            ResourceType::Database => out.push(Resource::cluster()),
            ResourceType::Cluster | ResourceType::Any => {}
        }
        let wildcard = Resource::new(self.resource_type, WILDCARD_RESOURCE);
        if !out.contains(&wildcard) {
            out.push(wildcard);
        }
        out
    }

    /// The resource whose `ALTER` a caller needs to change this resource's ACLs: a table's
    /// database, otherwise the resource itself ("the minimum granularity of ACL operation
    /// permissions is Database", Fluss's `authorizeAclOperation`).
    pub fn acl_admin_resource(&self) -> Resource {
        match self.resource_type {
            ResourceType::Table => Resource::database(self.database_name().unwrap_or("")),
            _ => self.clone(),
        }
    }

    /// Fluss's `Resource.toString()`: `Resource{type=TABLE, name='db.t'}`.
    pub fn fluss_string(&self) -> String {
        format!(
            "Resource{{type={}, name='{}'}}",
            self.resource_type, self.name
        )
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} '{}'", self.resource_type, self.name)
    }
}

/// One ACL: `principal` is allowed `operation` from `host` on `resource` (Fluss's
/// `AclBinding` of a `Resource` and an `AccessControlEntry`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AclBinding {
    /// What it is attached to.
    pub resource: Resource,
    /// Who it is for.
    pub principal: Principal,
    /// The client address it applies to (`*`: every host).
    pub host: String,
    /// What it allows.
    pub operation: OperationType,
    /// `ALLOW` (the only permission Fluss grants).
    pub permission: PermissionType,
}

impl AclBinding {
    /// `principal` may do `operation` on `resource` from any host.
    pub fn allow(resource: Resource, principal: Principal, operation: OperationType) -> Self {
        AclBinding {
            resource,
            principal,
            host: WILDCARD_HOST.to_string(),
            operation,
            permission: PermissionType::Allow,
        }
    }

    /// The same binding restricted to clients on `host`.
    pub fn from_host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// Whether this entry lets `principal` connected from `host` do `operation` (on the
    /// resource it is attached to): Fluss's `matchingAclExists` over
    /// [`OperationType::granted_by`].
    pub fn grants(&self, principal: &Principal, host: &str, operation: OperationType) -> bool {
        self.permission == PermissionType::Allow
            && (self.principal == *principal || self.principal == Principal::wildcard())
            && (self.host == WILDCARD_HOST || self.host == host)
            && (self.operation == OperationType::All
                || operation.granted_by().contains(&self.operation))
    }

    /// A binding as created must name one resource, operation and permission (not `ANY`)
    /// and a non-empty resource name, principal and host; an error names what is wrong.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| {
            Err(Error::invalid(format!(
                "invalid ACL binding {self}: {what}"
            )))
        };
        if self.resource.resource_type == ResourceType::Any {
            return bad("resource type ANY is only for filters".into());
        }
        if self.operation == OperationType::Any {
            return bad("operation ANY is only for filters".into());
        }
        if self.permission == PermissionType::Any {
            return bad("permission ANY is only for filters".into());
        }
        if self.resource.name.is_empty() {
            return bad("empty resource name".into());
        }
        if self.resource.resource_type == ResourceType::Table
            && self.resource.name != WILDCARD_RESOURCE
            && self.resource.name.split('.').count() != 2
        {
            return bad("a table resource is named database.table".into());
        }
        if self.principal.name.is_empty() || self.principal.principal_type.is_empty() {
            return bad("empty principal".into());
        }
        if self.host.is_empty() {
            return bad("empty host (use * for every host)".into());
        }
        Ok(())
    }

    /// A binding from the text forms the bindings and the CLI take (as Fluss's `add_acl`
    /// procedure): `resource` as [`Resource::parse`], `principal` as [`Principal::parse`],
    /// `operation` as [`OperationType::parse`], `host` (None or `ANY`: every host), permission
    /// ALLOW. Checked with [`AclBinding::validate`].
    pub fn parse(
        resource: &str,
        principal: &str,
        operation: &str,
        host: Option<&str>,
    ) -> Result<Self> {
        let host = match host.map(str::trim) {
            None | Some("") => WILDCARD_HOST.to_string(),
            Some(h) if h.eq_ignore_ascii_case("ANY") => WILDCARD_HOST.to_string(),
            Some(h) => h.to_string(),
        };
        let b = AclBinding {
            resource: Resource::parse(resource)?,
            principal: Principal::parse(principal)?,
            host,
            operation: OperationType::parse(operation)?,
            permission: PermissionType::Allow,
        };
        b.validate()?;
        Ok(b)
    }

    /// The binding of its wire form; unknown codes are errors naming them.
    pub fn from_proto(pb: &PbAclInfo) -> Result<Self> {
        Ok(AclBinding {
            resource: Resource::new(
                ResourceType::from_code(pb.resource_type)?,
                pb.resource_name.clone(),
            ),
            principal: Principal::new(pb.principal_type.clone(), pb.principal_name.clone()),
            host: pb.host.clone(),
            operation: OperationType::from_code(pb.operation_type)?,
            permission: PermissionType::from_code(pb.permission_type)?,
        })
    }

    /// Its wire form.
    pub fn to_proto(&self) -> PbAclInfo {
        PbAclInfo {
            resource_name: self.resource.name.clone(),
            resource_type: self.resource.resource_type.code(),
            principal_name: self.principal.name.clone(),
            principal_type: self.principal.principal_type.clone(),
            host: self.host.clone(),
            operation_type: self.operation.code(),
            permission_type: self.permission.code(),
        }
    }
}

impl fmt::Display for AclBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} on {} from host {}",
            self.principal, self.permission, self.operation, self.resource, self.host
        )
    }
}

/// A pattern over ACL bindings (Fluss's `AclBindingFilter`): `None` fields and the `ANY`
/// types match everything. Built with [`AclFilter::any`] and the `with_*` methods.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AclFilter {
    /// Resource type (`ANY`: every type, and then the name is not compared, as in Fluss).
    pub resource_type: ResourceType,
    /// Resource name (`None`: any).
    pub resource_name: Option<String>,
    /// Principal (`None`: any).
    pub principal: Option<Principal>,
    /// Host (`None`: any).
    pub host: Option<String>,
    /// Operation (`ANY`: every operation).
    pub operation: OperationType,
    /// Permission (`ANY`: every permission).
    pub permission: PermissionType,
}

impl Default for AclFilter {
    fn default() -> Self {
        AclFilter::any()
    }
}

impl AclFilter {
    /// Matches every binding.
    pub fn any() -> Self {
        AclFilter {
            resource_type: ResourceType::Any,
            resource_name: None,
            principal: None,
            host: None,
            operation: OperationType::Any,
            permission: PermissionType::Any,
        }
    }

    /// Matches exactly `binding` (its resource, principal, host, operation and permission).
    pub fn exact(binding: &AclBinding) -> Self {
        AclFilter {
            resource_type: binding.resource.resource_type,
            resource_name: Some(binding.resource.name.clone()),
            principal: Some(binding.principal.clone()),
            host: Some(binding.host.clone()),
            operation: binding.operation,
            permission: binding.permission,
        }
    }

    /// A filter from the text forms the bindings and the CLI take (as Fluss's `list_acl` /
    /// `drop_acl` procedures): each of None or `ANY` matches everything; `resource` as
    /// [`Resource::parse`], `principal` as [`Principal::parse`] (`ALL`: the wildcard
    /// principal `*:*`), `operation` / `permission` by name.
    pub fn parse(
        resource: Option<&str>,
        principal: Option<&str>,
        operation: Option<&str>,
        host: Option<&str>,
        permission: Option<&str>,
    ) -> Result<Self> {
        let given = |v: Option<&str>| {
            v.map(str::trim)
                .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("ANY"))
                .map(str::to_string)
        };
        let mut f = AclFilter::any();
        if let Some(r) = given(resource) {
            f = f.with_resource(&Resource::parse(&r)?);
        }
        if let Some(p) = given(principal) {
            f.principal = Some(if p.eq_ignore_ascii_case("ALL") {
                Principal::wildcard()
            } else {
                Principal::parse(&p)?
            });
        }
        if let Some(o) = given(operation) {
            f.operation = OperationType::parse(&o)?;
        }
        f.host = given(host);
        if let Some(p) = given(permission) {
            f.permission = PermissionType::parse(&p)?;
        }
        Ok(f)
    }

    /// Only bindings on `resource`.
    pub fn with_resource(mut self, resource: &Resource) -> Self {
        self.resource_type = resource.resource_type;
        self.resource_name = Some(resource.name.clone());
        self
    }

    /// Only bindings on resources of this type (any name).
    pub fn with_resource_type(mut self, resource_type: ResourceType) -> Self {
        self.resource_type = resource_type;
        self.resource_name = None;
        self
    }

    /// Only bindings for `principal`.
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Only bindings with this host.
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// Only bindings of this operation (`ANY`: every one).
    pub fn with_operation(mut self, operation: OperationType) -> Self {
        self.operation = operation;
        self
    }

    /// Only bindings of this permission.
    pub fn with_permission(mut self, permission: PermissionType) -> Self {
        self.permission = permission;
        self
    }

    /// Whether `resource` matches the resource part (Fluss's `ResourceFilter.matches`: the
    /// name is compared only when the type is not `ANY`).
    pub fn matches_resource(&self, resource: &Resource) -> bool {
        if self.resource_type == ResourceType::Any {
            return true;
        }
        self.resource_type == resource.resource_type
            && self
                .resource_name
                .as_ref()
                .is_none_or(|n| *n == resource.name)
    }

    /// Whether the entry part (principal, host, operation, permission) matches
    /// (Fluss's `AccessControlEntryFilter.matches`).
    pub fn matches_entry(&self, b: &AclBinding) -> bool {
        self.principal.as_ref().is_none_or(|p| *p == b.principal)
            && self.host.as_ref().is_none_or(|h| *h == b.host)
            && (self.operation == OperationType::Any || self.operation == b.operation)
            && (self.permission == PermissionType::Any || self.permission == b.permission)
    }

    /// Whether `binding` matches the whole filter.
    pub fn matches(&self, binding: &AclBinding) -> bool {
        self.matches_resource(&binding.resource) && self.matches_entry(binding)
    }

    /// The filter of its wire form; unknown codes are errors naming them. As Fluss, a
    /// principal is only taken when both its name and its type are present.
    pub fn from_proto(pb: &PbAclFilter) -> Result<Self> {
        Ok(AclFilter {
            resource_type: ResourceType::from_code(pb.resource_type)?,
            resource_name: pb.resource_name.clone(),
            principal: match (&pb.principal_type, &pb.principal_name) {
                (Some(t), Some(n)) => Some(Principal::new(t.clone(), n.clone())),
                _ => None,
            },
            host: pb.host.clone(),
            operation: OperationType::from_code(pb.operation_type)?,
            permission: PermissionType::from_code(pb.permission_type)?,
        })
    }

    /// Its wire form.
    pub fn to_proto(&self) -> PbAclFilter {
        PbAclFilter {
            resource_name: self.resource_name.clone(),
            resource_type: self.resource_type.code(),
            principal_name: self.principal.as_ref().map(|p| p.name.clone()),
            principal_type: self.principal.as_ref().map(|p| p.principal_type.clone()),
            host: self.host.clone(),
            operation_type: self.operation.code(),
            permission_type: self.permission.code(),
        }
    }
}

/// The message of a denied request, as Fluss's `AbstractAuthorizer.authorize` words it: it
/// names the principal, the operation and the resource.
pub fn denial_message(
    principal: &Principal,
    operation: OperationType,
    resource: &Resource,
) -> String {
    format!(
        "Principal {} have no authorization to operate {} on resource {}",
        principal.fluss_string(),
        operation,
        resource.fluss_string()
    )
}

/// The error of a denied request: `AUTHORIZATION_EXCEPTION` with [`denial_message`].
pub fn denied(principal: &Principal, operation: OperationType, resource: &Resource) -> Error {
    Error::from_fluss(
        codes::AUTHORIZATION_EXCEPTION,
        denial_message(principal, operation, resource),
    )
}

/// Whether `e` is a refusal by the server's authorizer (`AUTHORIZATION_EXCEPTION`).
pub fn is_authorization_error(e: &Error) -> bool {
    e.fluss_code() == Some(codes::AUTHORIZATION_EXCEPTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_fluss_codes() {
        assert_eq!(OperationType::Describe.code(), 8);
        assert_eq!(OperationType::from_code(6).unwrap(), OperationType::Drop);
        assert_eq!(ResourceType::Table.code(), 4);
        assert_eq!(PermissionType::Allow.code(), 2);
        assert!(OperationType::from_code(9).is_err());
        assert_eq!(OperationType::parse("write").unwrap(), OperationType::Write);
        let e = OperationType::parse("DELETE").unwrap_err();
        assert!(e.message().contains("DELETE"), "{e}");
    }

    #[test]
    fn texts_parse() {
        assert_eq!(
            Principal::parse("User:alice").unwrap(),
            Principal::user("alice")
        );
        assert!(Principal::parse("alice").is_err());
        assert_eq!(
            Principal::parse_list("User:a; User:b;").unwrap(),
            vec![Principal::user("a"), Principal::user("b")]
        );
        assert_eq!(Resource::parse("cluster").unwrap(), Resource::cluster());
        assert_eq!(
            Resource::parse("cluster.db").unwrap(),
            Resource::database("db")
        );
        assert_eq!(
            Resource::parse("cluster.db.t").unwrap(),
            Resource::table("db", "t")
        );
        assert!(Resource::parse("db.t").is_err());
        assert!(Resource::parse("cluster.a.b.c").is_err());
        for t in ["cluster", "cluster.db", "cluster.db.t"] {
            assert_eq!(Resource::parse(t).unwrap().text(), t);
        }
        let b = AclBinding::parse("cluster.db.t", "User:a", "read", None).unwrap();
        assert_eq!(
            b,
            AclBinding::allow(
                Resource::table("db", "t"),
                Principal::user("a"),
                OperationType::Read
            )
        );
        assert!(AclBinding::parse("cluster", "User:a", "ANY", None).is_err());
        let f = AclFilter::parse(None, Some("ALL"), Some("write"), Some("ANY"), None).unwrap();
        assert_eq!(
            f,
            AclFilter::any()
                .with_principal(Principal::wildcard())
                .with_operation(OperationType::Write)
        );
        assert!(AclFilter::parse(Some("db"), None, None, None, None).is_err());
    }

    #[test]
    fn grants_follow_fluss_rules() {
        let alice = Principal::user("alice");
        let read = AclBinding::allow(
            Resource::table("d", "t"),
            alice.clone(),
            OperationType::Read,
        );
        assert!(read.grants(&alice, "10.0.0.1", OperationType::Read));
        assert!(read.grants(&alice, "10.0.0.1", OperationType::Describe));
        assert!(!read.grants(&alice, "10.0.0.1", OperationType::Write));
        assert!(!read.grants(&Principal::user("bob"), "10.0.0.1", OperationType::Read));
        let all = AclBinding::allow(
            Resource::cluster(),
            Principal::wildcard(),
            OperationType::All,
        )
        .from_host("10.0.0.2");
        assert!(all.grants(&alice, "10.0.0.2", OperationType::Drop));
        assert!(!all.grants(&alice, "10.0.0.1", OperationType::Drop));
        let describe =
            AclBinding::allow(Resource::cluster(), alice.clone(), OperationType::Describe);
        assert!(!describe.grants(&alice, "h", OperationType::Read));
        assert_eq!(
            Resource::table("d", "t").inherited_from(),
            vec![
                Resource::table("d", "t"),
                Resource::database("d"),
                Resource::cluster(),
                Resource::new(ResourceType::Table, "*")
            ]
        );
    }

    #[test]
    fn filters_match_as_fluss() {
        let b = AclBinding::allow(
            Resource::table("d", "t"),
            Principal::user("a"),
            OperationType::Read,
        );
        assert!(AclFilter::any().matches(&b));
        assert!(AclFilter::exact(&b).matches(&b));
        // With type ANY the name is not compared (Fluss's ResourceFilter).
        let mut f = AclFilter::any();
        f.resource_name = Some("other".into());
        assert!(f.matches(&b));
        assert!(!AclFilter::any()
            .with_resource(&Resource::table("d", "u"))
            .matches(&b));
        assert!(!AclFilter::any()
            .with_operation(OperationType::Write)
            .matches(&b));
        assert!(AclFilter::any()
            .with_resource_type(ResourceType::Table)
            .matches(&b));
        let round = AclFilter::from_proto(&AclFilter::exact(&b).to_proto()).unwrap();
        assert_eq!(round, AclFilter::exact(&b));
        assert_eq!(AclBinding::from_proto(&b.to_proto()).unwrap(), b);
    }
}
