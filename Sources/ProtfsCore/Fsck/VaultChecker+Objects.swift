import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// What fsck checks on one object: a regular file's header, size and chunks, and the class
/// hint and sealed xattrs of files and directories.
extension VaultChecker {
    func checkFile(_ name: String, status: stat, in parent: FileDescriptor, location: Location) {
        let identity = BackingIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        if let verdict = fileVerdicts[identity] {
            if let problem = verdict { moveToLostAndFound(name, in: parent, location: location, problem: problem) }
            return
        }
        let verdict: Problem?
        do throws(Errno) {
            // Checked again as it is opened: a FIFO or device node swapped in since the
            // fstatat is never opened.
            verdict = try OwnedDescriptor.openRegularFile(name, in: parent).closeAfter { (file) throws(Errno) in
                try inspect(file, location: location)
            }
        } catch {
            record(.unreadable(operation: "read", errno: error), at: location)
            return
        }
        fileVerdicts[identity] = verdict
        if let verdict { moveToLostAndFound(name, in: parent, location: location, problem: verdict) }
    }

    /// Why the file's contents cannot be read, or nil when they can (or cannot be checked for
    /// want of the class key). Checks the hint and xattrs on the way, since both need the
    /// file id from the header.
    private func inspect(_ file: FileDescriptor, location: Location) throws(Errno) -> Problem? {
        let status = try file.status()
        let bytes = try FileHeader.readBytes(from: file)
        if let defect = FileHeader.diagnose(bytes, keyring: keyring) { return .header(defect) }
        let header = try FileHeader.decode(bytes, keyring: keyring)
        if header.version == 1 { report.formatOneFiles += 1 }
        checkClassHint(of: file, objectID: header.fileID, actual: header.protectionClass, location: location)
        checkAttributes(of: file, objectID: header.fileID, location: location)
        let backingSize = Int64(status.st_size)
        guard ContentLayout.isWellFormed(backingSize: backingSize) else { return .backingSizeMalformed(backingSize) }
        guard keyring.key(for: header.protectionClass) != nil else {
            report.filesNotChecked += 1
            return nil
        }
        let contents: EncryptedFile
        do { contents = try EncryptedFile.open(file.reopen(.readOnly), keyring: keyring) } catch {
            switch error {
            case .io: return .fileKeyDamaged
            case .permissionDenied:
                report.filesNotChecked += 1
                return nil
            default: throw error
            }
        }
        let plaintextSize = ContentLayout.plaintextSize(backingSize: backingSize)
        let damaged = try damagedChunks(of: contents, plaintextSize: plaintextSize)
        return damaged.isEmpty ? nil : .chunksDamaged(damaged, chunkCount: ContentLayout.chunkCount(plaintextSize: plaintextSize))
    }

    /// Reads the whole file in runs of chunks; a run that fails is read again chunk by chunk
    /// to name the chunks that fail authentication.
    private func damagedChunks(of file: EncryptedFile, plaintextSize: Int64) throws(Errno) -> [Int64] {
        try scratch.withUnsafeMutableBytes { (block) throws(Errno) -> [Int64] in
            defer { secureZero(block) }
            var damaged: [Int64] = []
            var offset: Int64 = 0
            while offset < plaintextSize {
                let run = offset ..< min(offset + Int64(block.count), plaintextSize)
                do throws(Errno) {
                    _ = try file.read(into: block, at: offset)
                } catch .io {
                    let chunkBuffer = UnsafeMutableRawBufferPointer(rebasing: block[0 ..< ContentLayout.chunkByteCount])
                    for index in ContentLayout.chunks(covering: run) {
                        do throws(Errno) {
                            _ = try file.read(into: chunkBuffer, at: index * Int64(ContentLayout.chunkByteCount))
                        } catch .io {
                            damaged.append(index)
                        }
                    }
                }
                offset = run.upperBound
            }
            return damaged
        }
    }

    /// What a directory carries besides its entries: its record's format, its class hint and
    /// its xattrs. A record in format 1 shows its class: under `--repair` it is rewritten in
    /// format 2 (same id and class, atomically), otherwise counted for the summary.
    func checkRecordAndAttributes(of directory: FileDescriptor, metadata: DirectoryMetadata, location: Location) {
        if metadata.isFormatOne {
            let upgraded = repair
                && (try? metadata.withClass(metadata.protectionClass).replace(in: directory, vaultID: vault.vaultID, keys: keys)) != nil
            if upgraded { report.directoryRecordsUpgraded += 1 } else { report.formatOneDirectories += 1 }
        }
        checkClassHint(of: directory, objectID: metadata.directoryID, actual: metadata.protectionClass, location: location)
        checkAttributes(of: directory, objectID: metadata.directoryID, location: location)
    }

    /// The hint must authenticate for this object and agree with its header or `protfs.dir`.
    /// A missing one is put back quietly, as the daemon would.
    func checkClassHint(of object: FileDescriptor, objectID: ObjectID, actual: ProtectionClass, location: Location) {
        let hint: ProtectionClass?
        do { hint = try ClassHint.read(from: object, objectID: objectID, keys: keys) } catch {
            guard error == .io else {
                record(.unreadable(operation: "read the class hint of", errno: error), at: location)
                return
            }
            rewriteClassHint(.classHintDamaged(actual: actual), to: actual, of: object, objectID: objectID, location: location)
            return
        }
        guard let hint else {
            if (try? ClassHint.write(actual, to: object, objectID: objectID, keys: keys)) != nil { report.classHintsAdded += 1 }
            return
        }
        if hint != actual {
            rewriteClassHint(.classHintWrong(hint: hint, actual: actual), to: actual, of: object, objectID: objectID,
                             location: location)
        }
    }

    /// The packed blob must open for this object; every `user.protfs.x.*` attribute must have a
    /// name that decodes for this object and a value that opens, and no name the blob holds
    /// too (a stale copy a crash left, which the blob's shadows). The class hint and
    /// attributes of other namespaces are not ours here.
    func checkAttributes(of object: FileDescriptor, objectID: ObjectID, location: Location) {
        let names: [String]
        do { names = try object.extendedAttributeNames() } catch {
            record(.unreadable(operation: "list the extended attributes of", errno: error), at: location)
            return
        }
        var packed = names.contains(PackedXattrs.backingName)
            ? checkPackedAttributes(of: object, objectID: objectID, location: location) : PackedXattrs()
        defer { packed.wipe() }
        for backingName in names.sorted() where backingName.hasPrefix(XattrCodec.backingPrefix) {
            guard let name = XattrCodec.name(ofBacking: backingName, objectID: objectID, keys: keys) else {
                removeAttribute(.attributeNameUndecodable(backingName: backingName), backingName, of: object, location: location)
                continue
            }
            if var shadowing = try? packed.value(of: name) {
                secureZero(&shadowing)
                removeAttribute(.attributeShadowed(name: name, backingName: backingName), backingName, of: object, location: location)
                continue
            }
            let sealed: [UInt8]
            do { sealed = try object.extendedAttribute(backingName) } catch {
                record(.unreadable(operation: "read an extended attribute of", errno: error), at: location)
                continue
            }
            guard var value = try? XattrCodec.openValue(sealed, name: name, objectID: objectID, keys: keys) else {
                removeAttribute(.attributeValueDamaged(name: name, backingName: backingName), backingName, of: object, location: location)
                continue
            }
            secureZero(&value)
        }
    }

    /// The packed attributes, or none when the blob does not open (then a finding).
    private func checkPackedAttributes(of object: FileDescriptor, objectID: ObjectID, location: Location) -> PackedXattrs {
        let sealed: [UInt8]
        do { sealed = try object.extendedAttribute(PackedXattrs.backingName) } catch {
            record(.unreadable(operation: "read an extended attribute of", errno: error), at: location)
            return PackedXattrs()
        }
        guard let packed = try? PackedXattrs.open(sealed, objectID: objectID, keys: keys) else {
            removeAttribute(.packedAttributesDamaged, PackedXattrs.backingName, of: object, location: location)
            return PackedXattrs()
        }
        return packed
    }
}
