/*
 * dirtier.S - a tiny guest for the live interop test: a multiboot kernel
 * that keeps dirtying memory while QEMU migrates it.
 *
 *   7 MiB          one hot word, rewritten all the time
 *   8 .. 56 MiB    a wavefront: every 1024 rounds one more page gets the
 *                  round number; it wraps around at 56 MiB
 *
 * The wavefront reaches chunks that were zero when the migration started,
 * so later iterations register chunks the first one compressed.
 *
 * Every write is preceded by INVLPG of its page.  QEMU 7.2's TCG misses
 * writes through a TLB entry that was already dirty when migration cleared
 * the page's dirty bit (the bitmap sync's fast path does not reset the
 * TLBs; QEMU 9.0 added that reset).  Without the INVLPG the hot word can
 * arrive stale, in QEMU -> QEMU migrations as well as into rdmig.  Build
 * (binutils only, no 32-bit libc needed):
 *   as --32 -o dirtier.o dirtier.S
 *   ld -m elf_i386 -Ttext=0x100000 -e start -o dirtier.elf dirtier.o
 * and boot with qemu-system-x86_64 -kernel dirtier.elf (multiboot loads
 * 32-bit ELF kernels in protected mode, flat segments, no paging).
 */
	.set MB_MAGIC, 0x1badb002
	.set MB_FLAGS, 0
	.set COM1, 0x3f8
	.set HOT, 0x00700000
	.set WAVE_START, 0x00800000
	.set WAVE_END, 0x03800000

	.text
	.code32
	/* the multiboot header must sit in the first 8 KiB of the file */
	.align 4
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)

	.globl start
start:
	cli
	mov $hello, %esi
	mov $COM1, %dx
1:	lodsb
	test %al, %al
	jz 2f
	out %al, %dx
	jmp 1b
2:	mov $WAVE_START, %edi
	xor %ecx, %ecx
round:
	inc %ecx
	invlpg HOT
	mov %ecx, HOT
	test $0x3ff, %ecx
	jnz round
	invlpg (%edi)
	mov %ecx, (%edi)
	add $4096, %edi
	cmp $WAVE_END, %edi
	jb round
	mov $WAVE_START, %edi
	jmp round

hello:
	.asciz "DIRTIER up\n"
