#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/fernhill/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def esc(s):
    s.encode("ascii")  # ASCII only inside the PDFs
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def page_stream(header, lines, n, m):
    out = [f"BT /F1 9 Tf 72 770 Td ({esc(header)}) Tj ET"]
    body = ["BT /F1 11 Tf 13 TL 72 740 Td"]
    for line in lines:
        size = 11
        if line.startswith("# "):
            line, size = line[2:], 14
        if size != 11:
            body.append(f"/F1 {size} Tf ({esc(line)}) Tj /F1 11 Tf T*")
        else:
            body.append(f"({esc(line)}) Tj T*" if line else "T*")
    body.append("ET")
    out.append("\n".join(body))
    out.append(f"BT /F1 9 Tf 72 40 Td (Page {n} of {m}) Tj ET")
    return "\n".join(out).encode("ascii")


def write_pdf(path, title, header, pages, producer="fernhill make_pdfs.py"):
    objs = {}
    objs[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objs[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    kids = []
    num = 5
    for i, lines in enumerate(pages, 1):
        data = page_stream(header, lines, i, len(pages))
        objs[num + 1] = b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"
        objs[num] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (num + 1)
        )
        kids.append(num)
        num += 2
    objs[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    objs[4] = b"<< /Title (%s) /Producer (%s) >>" % (esc(title).encode(), esc(producer).encode())
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for k in sorted(objs):
        offsets[k] = len(out)
        out += b"%d 0 obj\n" % k + objs[k] + b"\nendobj\n"
    xref = len(out)
    total = max(objs) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % total
    for k in range(1, total):
        out += b"%010d 00000 n \n" % offsets[k]
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        total,
        xref,
    )
    with open(path, "wb") as f:
        f.write(out)


def split_pages(text):
    return [p.strip("\n").split("\n") for p in text.split("<<PAGE>>")]


DOCS = {}

DOCS["fernhill/price-guide"] = (
    "Fernhill Mobile Price Guide",
    "Fernhill Mobile Price Guide - personal plans - effective 1 April 2026",
    """
# Fernhill Mobile Price Guide
Charges outside your monthly plan, for personal customers.
Effective from 1 April 2026. All prices include VAT at 20%.

1. ABOUT THIS GUIDE
This guide lists what you pay for calls, texts and services that are not
included in your monthly plan. Your plan already includes unlimited calls
to UK numbers starting 01, 02, 03 and 07, and unlimited UK texts. The
prices of our plans themselves are in Plans and prices in our help centre.
Roaming charges are in Using your phone abroad.

2. CALLS TO SERVICE NUMBERS
Calls to service numbers are made up of two parts. The access charge comes
to us. The service charge goes to the organisation you are calling; they
set it and must tell you what it is in their advertising and on their
website. Access charges are per minute, rounded up to the next minute.

Number type                       Access charge     Service charge
0800 and 0808 (Freephone)         Free              Free
116 helplines, 999 and 112        Free              Free
084 and 087                       55p per minute    up to 7p per minute
09 (premium rate)                 55p per minute    up to GBP 3.60 a minute
118 (directory enquiries)         55p per minute    set by the provider
070 (personal numbers)            Not applicable    50p per minute
Texts to short codes              Standard UK text  set by the service

Calls to 084, 087, 09 and 118 numbers are not included in any plan, even
Unlimited, and they count towards your Bill Cap. If your Bill Cap is GBP 0
these calls are blocked. To protect you from unexpected costs, premium-rate
calls and texts are barred on every new account until you ask us to allow
them. You can bar them again at any time in the app, under Account >
Spending controls, and the change takes effect for all SIMs on your ac-
count within one hour.
<<PAGE>>
3. INTERNATIONAL CALLS AND TEXTS FROM THE UK
Calling or texting numbers abroad from the UK is not included in any plan.
Calls are charged per minute and rounded up to the next minute.

Band       Examples                         Calls a minute   Texts
Band A     EU countries, USA and Canada     20p              20p
Band B     Australia, India and Nigeria     75p              25p
Band C     Rest of the world                GBP 1.80*        35p
Satellite  Inmarsat and Iridium numbers     GBP 7.50         50p
* Or use International Saver, an add-on for GBP 5 a month with 300 minutes
  a month to Band A and Band B numbers. Unused minutes don't roll over.

You can cancel International Saver at any time, and it stops at your next
bill date. Calls to Band C numbers are never included in it.

4. PICTURE MESSAGES
Picture messages (MMS) to UK mobiles are included in every plan. Picture
messages sent to numbers abroad cost 40p each.

5. OTHER CHARGES
Item                                        Charge
Replacement SIM by standard post            Free
Replacement SIM by next-day delivery        GBP 4.99
New eSIM after 3 downloads in 12 months     GBP 5.00
Paper bill                                  GBP 2.00 a month
Late payment fee                            GBP 7.50
Copy of a bill more than 24 months old      GBP 3.00
Changing your phone number                  Free once a year, then GBP 10
Changing plan                               Free

6. IF YOU HAVE A QUESTION ABOUT A CHARGE
Call Customer Care on 150 from your Fernhill phone, or use chat in the
app. If you think a charge is wrong, tell us within 6 months of the bill
date.
""",
)

DOCS["fernhill/business-accounts-guide"] = (
    "Fernhill for Business: account guide",
    "Fernhill for Business - Account guide - version 3, January 2026",
    """
# Fernhill for Business: account guide
For companies, charities and sole traders with 2 or more lines.

1. BUSINESS PLANS
Business plans are sold on 12-month contracts, per line. Prices below do
not include VAT. You need at least 2 lines to open a business account.

Plan                  Data per line    Price per line a month
Business 25GB         25GB             GBP 9
Business 100GB        100GB            GBP 13
Business Unlimited    Unlimited        GBP 18

Shared Data Pool: every line on a Business 25GB or Business 100GB plan adds
its allowance to one pool that all those lines share. When the pool runs
out, each line can keep using data at 1GB for GBP 2, up to the limit the
account owner sets. Unlimited lines are not part of the pool.

2. MANAGING YOUR ACCOUNT
You can manage up to 50 lines yourself in the Fernhill Business portal.
Accounts with 25 or more lines also get a named account manager. Accounts
with more than 50 lines are managed with your account manager.

Each person who uses the portal has one role:

Role              Add lines   See all invoices   Change plans   Order SIMs
Owner             Yes         Yes                Yes            Yes
Admin             Yes         Yes                Yes            Yes
Billing viewer    No          Yes                No             No
Line user         No          No                 No             Own line
<<PAGE>>
An account has exactly one Owner, who agreed the contract. The Owner can
add up to 5 Admins. Only the Owner can close the account, transfer the
account to another company or change the bank details. Line users only
see their own usage and can order a replacement SIM for their own line.

3. INVOICES AND PAYMENT
We send one VAT invoice for the whole account on the 1st of each month by
email. Payment is due within 30 days of the invoice date, by Direct Debit
or bank transfer. We don't accept card payments for business accounts. If
an invoice is unpaid 30 days after it is due, we may suspend outgoing
calls on all lines until it is paid.

4. ADDING AND REMOVING LINES
New lines can be added at any time and start on a new 12-month contract.
If you remove a line before the end of its contract, you pay the monthly
price of that line for the months that are left. Within the first 30 days
of opening an account you can cancel any line without this charge.

5. SUPPORT
Business Customer Care: 0808 157 0195, Monday to Friday 8am to 6pm. Sev-
eral tasks, including porting 25 or more numbers, are handled only by our
business team. Please have your account number ready; it starts with FB.
""",
)

DOCS["cedarline/efl-cedar-fixed-12"] = (
    "Electricity Facts Label: Cedar Fixed 12",
    "Cedarline Energy LLC - Electricity Facts Label - Cedar Fixed 12 - EFL ID CDL-F12-2603",
    """
# Electricity Facts Label (EFL)
Cedarline Energy LLC, Retail Electric Provider certificate no. 10999
Cedar Fixed 12 - residential service
Northline Delivery service area - effective March 1, 2026

ELECTRICITY PRICE
Average monthly use            500 kWh       1,000 kWh      2,000 kWh
Average price per kWh          20.9 cents    20.0 cents     19.5 cents

The average price is based on your usage and includes the energy charge,
the Cedarline base charge and Northline Delivery charges in effect on the
date above. Your actual average price will vary with your actual usage.

HOW YOUR PRICE IS CALCULATED
Energy charge                      13.9 cents per kWh
Cedarline base charge              $5.00 per billing cycle
Northline Delivery charges         $4.39 per billing cycle, plus
                                   5.12 cents per kWh
Northline Delivery charges are passed through to you without mark-up. They
are set by the utility and approved by the Public Utility Commission, and
they may change during your contract.

OTHER KEY TERMS AND QUESTIONS
Type of product                    Fixed rate
Contract term                      12 months
Do I have a termination fee?       Yes, $150, unless you move and give us
                                   a forwarding address
Can my price change?               Only if Northline Delivery charges or
                                   state or federal fees change
Renewable content                  26 percent, above the state average
<<PAGE>>
FEES THAT MAY APPLY
Late payment fee                   5% of the past-due balance
Returned payment                   $25 per returned payment
Disconnection for non-payment      $20, plus utility charges
Reconnection                       $20, plus utility charges
Paper bill                         No charge
Security deposit                   Only if required after a credit check;
                                   see Deposits and credit check

YOUR RIGHTS
You may cancel this contract without a fee within 3 federal business days
after you receive your Terms of Service. About 30 days before your contract
ends, we will send you a renewal notice. If you do not choose a new plan,
your service will continue on our Flex Monthly variable-rate plan.

Average prices shown include all recurring charges but exclude state and
local sales taxes and the gross receipts reimbursement fee. Your bill may
also include charges for optional services you choose, such as the Green
Power add-on.

This label explains the main terms of the plan in a standard format so
that it can be compared with other plans. Your Terms of Service and Your
Rights as a Customer documents contain the full terms and are available at
cedarline.example/legal. For questions call 1-800-555-0147.
""",
)

DOCS["cedarline/solar-buyback-guide"] = (
    "Solar Buyback 12: customer guide",
    "Cedarline Energy - Solar Buyback 12 customer guide - revised February 2026",
    """
# Solar Buyback 12: customer guide
How Cedarline pays you for the extra power your solar panels send back to
the grid.

1. HOW SOLAR BUYBACK WORKS
On Solar Buyback 12 you pay 14.8 cents per kWh for the electricity you use
from the grid, like any fixed-rate plan. When your panels make more power
than your home is using, the extra flows back to the grid and your smart
meter records it as exported energy. We credit you 7.5 cents for every
kWh you export.

Buyback credits appear on your bill as a separate line called Solar
Buyback Credit. They reduce the Cedarline part of your bill, including the
energy charge and the base charge. Credits can reduce your bill to $0 but
not below it. Unused credit rolls over to your next bill and can be used
for up to 12 months; credit older than 12 months expires.

2. WHAT YOU NEED
- A solar system of up to 25 kW (AC), installed at the home you are buying
  power for. Batteries are allowed.
- Approval from your utility to connect the system to the grid (intercon-
  nection approval).
- A smart meter that records exported energy. Your utility programs or
  replaces the meter, usually within 10 business days of approval.

Buyback starts on the first full billing cycle after your meter starts
recording exports. Exports before that date are not credited.
<<PAGE>>
3. AN EXAMPLE
This example is for a home with an 8 kW system. It uses only the energy
charge and the buyback credit; your bill also includes the base charge and
delivery charges.

Month        Imported kWh    Exported kWh    Buyback credit
April        640             510             $38.25
May          810             560             $42.00
June         1,150           620             $46.50
July         1,320           540             $40.50

4. QUESTIONS
Does the credit cover delivery charges? No. Northline Delivery charges
and taxes are always billed in full.
What if I move? Tell us at least 10 days before you move. Buyback credit
left on your account when you move is not refunded in cash, but it is
applied to your final bill.
Is there a cap on exports? We credit exported energy up to the amount of
energy you imported in the same billing cycle. Exports above that amount
are not credited.
Is there a cancellation fee? Yes, $150, the same as our other 12-month
plans.
""",
)


def write_all(docs, here=HERE, producer="fernhill make_pdfs.py"):
    """Writes each of ``docs`` (document id: title, header, text) under ``here``/kb; the
    later fixtures (eval/kestrel, eval/tidewater, ...) write theirs with it."""
    for doc_id, (title, header, text) in docs.items():
        path = os.path.join(here, "kb", doc_id + ".pdf")
        write_pdf(path, title, header, split_pages(text), producer)
        sys.stdout.write(f"wrote {os.path.relpath(path, here)}\n")


def main():
    write_all(DOCS)


if __name__ == "__main__":
    main()
