// The values of an internet password's `kSecAttrProtocol` and `kSecAttrAuthenticationType`:
// Apple's four-character codes, kept and matched as given (docs/DATAPROTECTION.md).

/// FTP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
/// FTPAccount, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
/// HTTP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
/// IRC, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
/// NNTP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
/// POP3, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
/// SMTP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
/// SOCKS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
/// IMAP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
/// LDAP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
/// AppleTalk, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
/// AFP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
/// Telnet, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
/// SSH, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
/// FTPS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
/// HTTPS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
/// HTTPProxy, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
/// HTTPSProxy, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
/// FTPProxy, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
/// SMB, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
/// RTSP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
/// RTSPProxy, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
/// DAAP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
/// EPPC, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
/// IPP, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
/// NNTPS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
/// LDAPS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
/// TelnetS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
/// IMAPS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
/// IRCS, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
/// POP3S, a value of `kSecAttrProtocol`.
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"
/// NTLM authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
/// MSN authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
/// DPA authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
/// RPA authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
/// HTTPBasic authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// HTTPDigest authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
/// HTMLForm authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// Default authentication, a value of `kSecAttrAuthenticationType`.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"
